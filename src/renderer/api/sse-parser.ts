// Incremental Server-Sent Events parser (the subset the control API uses: `data:` lines, comments,
// blank-line terminators, LF or CRLF). Fed decoded text chunks; returns complete messages' data.

export class SseParser {
  private buffer = '';
  private data: string[] = [];

  push(chunk: string): string[] {
    this.buffer += chunk;
    const out: string[] = [];
    let nl: number;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, nl);
      // A lone \r at the very end may be the first half of \r\n still to come.
      if (this.buffer[nl] === '\r' && nl + 1 === this.buffer.length) break;
      this.buffer = this.buffer.slice(nl + (this.buffer.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (this.data.length) out.push(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith('data:')) {
        this.data.push(line.slice(line[5] === ' ' ? 6 : 5));
      }
      // Comments (":") keep-alives, event:, id:, retry: are not used by this API.
    }
    return out;
  }
}
