import { OutputTail } from '@exactly-once/tools/local-runtime/emulators';

/** What an emulator that dies before it is ready leaves for the error a person reads. */
test('keeps the last lines, across chunks that split a line, and drops blank ones', () => {
  const tail = new OutputTail(3);

  tail.push('one\ntwo\n\nthr');
  tail.push('ee\nfour\nfi');

  expect(tail.text()).toBe('three\nfour\nfi');
});

test('describes itself for an error: its lines indented, or that it printed nothing', () => {
  const tail = new OutputTail();
  expect(tail.describe('fauxqs')).toBe(' (fauxqs printed nothing)');

  tail.push('Error: Cannot find module node:sqlite\n');

  expect(tail.describe('fauxqs')).toBe('. Its last output:\n  Error: Cannot find module node:sqlite');
});
