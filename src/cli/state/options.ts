// The options of ii state migrate, as commander hands them to the body. Their
// own file so the wiring (index.ts) and the body (migrate.ts) both import them
// and neither imports the other.

export interface StateMigrateOptions {
  /** postgres://…, `postgres` (the configured URL) or `sqlite`. */
  to: string;
  /** With --to sqlite: the PostgreSQL store to copy from, when none is configured. */
  from?: string;
  json?: boolean;
}
