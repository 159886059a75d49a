// The answer to fs/read_text_file for a file that does not exist. ACP's own
// answer is its resource-not-found error (-32002): agents read before they
// write, to build a diff, and take "not found" as "create it". A generic error
// instead fails the write, so the agent could edit files but never create one.
import { RequestError } from '@agentclientprotocol/sdk';

/**
 * Agents that cannot tell "not found" from any other error, which read a
 * missing file as empty instead. gemini-cli (0.61.0, the newest in November
 * 2026): its ACP connection rejects with the JSON-RPC error object, not an
 * Error, and its AcpFileSystemService looks for "Resource not found" only in
 * an Error's message, so every error answer fails its write_file ("Error
 * checking existing file"). An empty file is what its write_file assumes for
 * a missing one anyway. Drop the entry once gemini-cli reads the error it got.
 */
const READS_MISSING_AS_EMPTY = new Set(['gemini-cli']);

/** What to answer for a read of `path`, which does not exist, from the agent named `agent` (its agentInfo.name). */
export function missingFileAnswer(agent: string | undefined, path: string): { content: string } {
  if (agent !== undefined && READS_MISSING_AS_EMPTY.has(agent)) return { content: '' };
  throw RequestError.resourceNotFound(path);
}
