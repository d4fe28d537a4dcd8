/** Waiting in unit tests for something that happens on the event loop (a message, a socket closing). */

/** Polls `ok` every 10 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await ok()); ) {
    if (Date.now() > deadline) throw new Error(`not seen within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
