import { requireSupportedNode } from './node-version';

// Imported first by every entry point (`npm start`, the tools, call.ts): on an unsupported Node the
// process stops here, before the imports below it load (and before anything fails less clearly).
requireSupportedNode();
