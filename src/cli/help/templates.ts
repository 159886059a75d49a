// The `ii help templates` topic: the prompt templates and their variables.
import {
  TEMPLATE_EXT,
  TEMPLATE_NAMES,
  TEMPLATE_PURPOSE,
  TEMPLATE_VARIABLES,
  overrideTemplatesDir,
  shippedTemplatesDir,
} from '../../job/prompts.js';
import { table } from '../format.js';

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
