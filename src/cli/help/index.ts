// `ii help [command...]` plus help topics that are not commands: `ii help templates`.
import type { Command } from 'commander';
import { UserError } from '../../errors.js';

// Each topic loads its text when asked for, so registering `help` costs nothing.
const TOPICS: Record<string, () => Promise<string>> = {
  templates: async () => (await import('./templates.js')).templatesHelp(),
};

/** Replaces commander's implicit help command with one that also knows help topics. */
export function registerHelpCommand(program: Command): void {
  program.helpCommand(false);
  program
    .command('help')
    .description(`show help for a command, or a topic (${Object.keys(TOPICS).join(', ')})`)
    .argument('[command...]', 'command path, e.g. "job do", or a topic')
    .action(async (words: string[]) => {
      const topic = words.length === 1 ? TOPICS[words[0]!] : undefined;
      if (topic) {
        process.stdout.write((await topic()) + '\n');
        return;
      }
      let cmd: Command = program;
      for (const w of words) {
        const next = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
        if (!next)
          throw new UserError(
            `no command or help topic "${words.join(' ')}". Topics: ${Object.keys(TOPICS).join(', ')}; commands: ii --help`,
          );
        cmd = next;
      }
      process.stdout.write(cmd.helpInformation());
    });
}
