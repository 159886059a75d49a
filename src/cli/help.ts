// `ii help [command...]` plus help topics that are not commands: `ii help templates`.
import type { Command } from 'commander';
import { UserError } from '../errors.js';
import {
  TEMPLATE_EXT,
  TEMPLATE_NAMES,
  TEMPLATE_PURPOSE,
  TEMPLATE_VARIABLES,
  overrideTemplatesDir,
  shippedTemplatesDir,
} from '../job/prompts.js';
import { table } from './format.js';

const TOPICS: Record<string, () => string> = {
  templates: templatesHelp,
};

export function templatesHelp(): string {
  const names = table(
    ['TEMPLATE', 'FILE', 'USE'],
    TEMPLATE_NAMES.map((n) => [n, n + TEMPLATE_EXT, TEMPLATE_PURPOSE[n]]),
  );
  const vars = table(['VARIABLE', 'MEANING'], TEMPLATE_VARIABLES);
  return [
    'Prompt templates (Liquid: https://liquidjs.com) that `ii job do` renders for the agent.',
    '',
    names,
    '',
    `Shipped in:  ${shippedTemplatesDir()}`,
    `Override:    a file of the same name in ${overrideTemplatesDir('<repo>')}`,
    '             replaces the shipped template for that repository.',
    '',
    'Variables (the same in every template; unknown names are an error):',
    '',
    vars,
    '',
    'Example: {{ Todo.Title }}, {% if Feedback != blank %}...{% endif %}',
    'A template that fails to parse or render stops the job with an error naming the file and line.',
  ].join('\n');
}

/** Replaces commander's implicit help command with one that also knows help topics. */
export function registerHelpCommand(program: Command): void {
  program.helpCommand(false);
  program
    .command('help')
    .description(`show help for a command, or a topic (${Object.keys(TOPICS).join(', ')})`)
    .argument('[command...]', 'command path, e.g. "job do", or a topic')
    .action((words: string[]) => {
      const topic = words.length === 1 ? TOPICS[words[0]!] : undefined;
      if (topic) {
        process.stdout.write(topic() + '\n');
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
