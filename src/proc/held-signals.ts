// Signals held over a stretch where their real handler is not installed yet.
// A job's first agent starts as soon as its workspace is made, before the job's
// records are written and `ii job do` installs the handlers that stop the job
// (cancel the agent, release the workspace): a Ctrl-C in between, taking
// Node's default action, would end the runner and leave that agent behind.
// Held, the signal reaches those handlers once they are there.

/** The signals a job runner answers by stopping its job. */
export const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface HeldSignals {
  /** The first signal held so far, if any. */
  readonly held: NodeJS.Signals | null;
  /**
   * Stops holding and sends the signal held (if any) to this process again,
   * where whatever handles it now gets it: the job's handlers, or Node's
   * default action. Once only; later calls do nothing.
   */
  release(): void;
}

/** Holds `signals` from now until release(): each is caught and remembered, not acted on. */
export function holdSignals(signals: NodeJS.Signals[] = STOP_SIGNALS): HeldSignals {
  let held: NodeJS.Signals | null = null;
  let released = false;
  const onSignal = (sig: NodeJS.Signals) => {
    held ??= sig;
  };
  for (const sig of signals) process.on(sig, onSignal);
  return {
    get held() {
      return held;
    },
    release() {
      if (released) return;
      released = true;
      for (const sig of signals) process.off(sig, onSignal);
      if (held) process.kill(process.pid, held);
    },
  };
}
