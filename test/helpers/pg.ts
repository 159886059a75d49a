// The run's private PostgreSQL server (test/setup/pg-global.ts), seen from a
// test file: a fresh database per suite, and the URLs to reach it.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { PgServerInfo } from './pg-server.js';

/** The server, or null (then `pgWhyNot()` says why: tests skip with that). */
export const pgServer = (): PgServerInfo | null => inject('pg');
export const pgWhyNot = (): string => inject('pgWhyNot');

/** A URL for `database` over the Unix socket, as the trusted test user. */
export function socketUrl(s: PgServerInfo, database: string): string {
  return `postgres://${s.user}@localhost:${s.port}/${database}?host=${encodeURIComponent(s.socketDir)}`;
}

/** A URL for `database` over loopback TCP, with a password (the given one, or the right one). */
export function passwordUrl(s: PgServerInfo, database: string, password = s.password): string {
  return `postgres://${s.passwordUser}:${encodeURIComponent(password)}@127.0.0.1:${s.port}/${database}`;
}

/**
 * Makes a database for one suite (empty, or a copy of `template`); its name
 * is returned. A copy of a migrated template takes a few ms where migrating
 * takes hundreds.
 */
export async function freshDatabase(s: PgServerInfo, prefix = 'ii_test', template?: string): Promise<string> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const c = new pg.Client({ host: s.socketDir, port: s.port, user: s.user, database: 'postgres' });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  } finally {
    await c.end();
  }
  return name;
}

/** Drops a suite's database (its connections must be closed first). */
export async function dropDatabase(s: PgServerInfo, name: string): Promise<void> {
  const c = new pg.Client({ host: s.socketDir, port: s.port, user: s.user, database: 'postgres' });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await c.end();
  }
}
