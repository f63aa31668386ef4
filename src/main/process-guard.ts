// The last line of defence of a long-running lab (issue 22): a promise that nobody handled is logged
// and the process keeps running. Node's default ends the process on one, and the lab holds calls it
// acknowledged and deliveries it must still send; lint (no-floating-promises, ignoreVoid off) keeps
// such promises out of main, this catches what slips through. No imports: tests run it as it is.

export function keepRunningOnUnhandledRejection(log: (line: string) => void): () => void {
  const onRejection = (reason: unknown) => {
    const what = reason instanceof Error ? (reason.stack ?? reason.message) : String(reason);
    log(`webhook-lab: an unhandled promise rejection was logged and the lab keeps running (please report it): ${what}`);
  };
  process.on('unhandledRejection', onRejection);
  return () => process.off('unhandledRejection', onRejection);
}
