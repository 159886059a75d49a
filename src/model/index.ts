export * from './todo.js';
export * from './session.js';
export * from './job.js';
export * from './derive.js';
export * from './usage.js';
export * from './enums.js';
export * from './event.js';
export * from './permission-ask.js';
