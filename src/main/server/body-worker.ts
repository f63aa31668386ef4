import { readOpBody, type BodyTask, type BodyTaskResult } from './op-body';

// The control API's body reader (body-pool.ts): one worker thread, run by piscina, that reads a
// large JSON body and checks it against its operation's schema, off the event loop.

export default function run(task: BodyTask): BodyTaskResult {
  return readOpBody(task);
}
