// React, React's reconciler and Ink pick their production or development
// build from NODE_ENV once, when loaded. The dashboard wants the production
// ones, but NODE_ENV must not stay set in the process: whatever it starts
// inherits its environment (a job's runner, then `npm ci`, which skips
// devDependencies under NODE_ENV=production, and the project's tests). So it
// is set only while they load, and only when the user had not set it.

/** Runs `load` with NODE_ENV=production unless the user set NODE_ENV; removed again afterwards. */
export async function loadInProduction<T>(load: () => Promise<T>): Promise<T> {
  if (process.env.NODE_ENV !== undefined) return load();
  process.env.NODE_ENV = 'production';
  try {
    return await load();
  } finally {
    delete process.env.NODE_ENV;
  }
}
