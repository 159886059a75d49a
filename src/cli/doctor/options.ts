// The options of ii doctor, as commander hands them to the body. Their own file so
// the wiring (index.ts) and the body (actions.ts) both import them and neither
// imports the other.

export interface DoctorOptions {
  json?: boolean;
  agent?: string;
  tests?: boolean;
}
