/**
 * The example the tools run against. The tools import the domain only from here, so a fork that
 * replaces the shop with its own domain points this one line at its own tooling module (the shape
 * it must have: tools/example.ts) and edits no tool.
 */
export { tooling } from './shop/tooling';
