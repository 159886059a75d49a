import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { parseTodoTemplate, todoTemplate } from '../../src/todo/edit-template.js';

describe('the $EDITOR todo template', () => {
  it('round-trips what the command line gave', () => {
    const t = todoTemplate({
      title: 'Fix it',
      type: 'bug',
      priority: 0,
      deps: ['ab', 'cd'],
      description: 'Line 1\n\nLine 3',
    });
    expect(parseTodoTemplate(t)).toEqual({
      title: 'Fix it',
      type: 'bug',
      priority: 0,
      deps: ['ab', 'cd'],
      description: 'Line 1\n\nLine 3',
    });
  });
  it('defaults, comments ignored, a # in the title kept', () => {
    const t = todoTemplate().replace('title: ', 'title: Support C# files');
    expect(parseTodoTemplate(t)).toMatchObject({
      title: 'Support C# files',
      type: 'task',
      priority: 2,
      deps: [],
    });
  });
  it('an empty title or a bad field is a clear error', () => {
    expect(() => parseTodoTemplate(todoTemplate())).toThrow(UserError);
    expect(() => parseTodoTemplate(todoTemplate())).toThrow(/no title/);
    expect(() =>
      parseTodoTemplate(todoTemplate({ title: 'x' }).replace('\ntype: task', '\ntype: epic')),
    ).toThrow(/unknown todo type "epic"/);
    expect(() =>
      parseTodoTemplate(todoTemplate({ title: 'x' }).replace('\npriority: 2', '\npriority: 7')),
    ).toThrow(/priority "7"/);
  });
});
