// Every wire and file format, one name each, for code outside schema/ that wants them together.
export * from './briefing';
export * from './canonical';
export * from './declaration';
export * from './envelope';
export * from './heartbeat';
export * from './host-state';
export * from './inventory';
export * from './overlay';
export * from './owned';
export * from './parse';
export * from './primitives';
export * from './profile';
export * from './refuse-duplicates';
export * from './report';
export * from './resource';
export * from './token';
export * from './local-declaration';
