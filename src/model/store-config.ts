// The [state] section of incrementum.toml: where the store of record is (a
// shared PostgreSQL) and what names a repository in it. Its own file so the
// config schema's other sections need not change for it. ([remote] name,
// which also names a repository in a shared store, is the remote section's.)
import { z } from 'zod';
import { PROJECT_NAME, PROJECT_NAME_HELP } from './project-name.js';

export const StateSection = z
  .object({
    /**
     * A PostgreSQL URL (postgres://user:password@host/db): the store of record
     * instead of the local SQLite file. Only in the user's config
     * (~/.config/incrementum/config.toml, not readable by others when it holds
     * a password); II_DATABASE_URL wins over it.
     */
    url: z
      .string()
      .trim()
      .refine((u) => /^postgres(ql)?:\/\//.test(u), { error: 'must be a postgres:// or postgresql:// URL' })
      .optional(),
    /** The name every clone of this repository shares in a shared store (else its remote's URL). */
    project: z
      .string()
      .refine((p) => PROJECT_NAME.test(p), { error: PROJECT_NAME_HELP })
      .optional(),
  })
  .strict();
export type StateSection = z.infer<typeof StateSection>;
