/**
 * Calls `fn` with every complete line (without its `\n`) that `stream` delivers, as it arrives:
 * the stream keeps being read, so a child's pipe never fills. A last line without `\n` is not
 * delivered.
 *
 * Tested in test/unit/daemon/control-socket.test.ts (the client reads the daemon's progress and
 * result line by line).
 */
export function eachLine(stream: NodeJS.ReadableStream, fn: (line: string) => void): void {
  let buf = '';
  stream.on('data', (d: Buffer | string) => {
    buf += typeof d === 'string' ? d : d.toString('utf8');
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      fn(line);
    }
  });
}
