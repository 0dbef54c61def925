'use strict';
/**
 * Preloaded (node --require) into emulator processes the runtime starts: they
 * exit when the runtime goes away, even when it was killed (SIGKILL) and
 * could not stop them. The runtime spawns them with an IPC channel for this.
 */
process.on('disconnect', () => process.exit(0));
