import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;
type HttpSocket = Duplex & { _httpMessage?: ServerResponse | null };

/** Per connection, the answers of pipelined requests not yet handed to the listener, oldest first. */
const queued = new WeakMap<Duplex, ServerResponse[]>();

/**
 * Pipelined requests (several written at once on one connection) are handled one after the other:
 * Node parses them all at once and queues their answers, writing each once the one before it is out,
 * and writes none after an answer that closes the connection (`Connection: close`, as after an error).
 * So a request is handed to `listener` only once its answer is the connection's current one (every
 * earlier answer written), and one behind an answer that closed the connection is never handed over:
 * neither stored nor answered, the client must send it again (RFC 9112 §9.3.2) and no duplicate is
 * made. A request on its own (the usual case, one at a time on a keep-alive connection) goes straight
 * through.
 */
export function inOrder(listener: RequestListener): RequestListener {
  return (req, res) => {
    const socket = req.socket;
    if (res.socket) {
      if (socket.writableEnded) req.resume(); // behind an answer that closed the connection
      else listener(req, res);
      return;
    }
    let waiting = queued.get(socket);
    if (!waiting) queued.set(socket, (waiting = []));
    waiting.push(res);
    // Node gives the answer the connection once every earlier one is out; never if one closed it.
    res.once('socket', () => {
      waiting.splice(waiting.indexOf(res), 1);
      if (socket.writableEnded) req.resume();
      else listener(req, res);
    });
  };
}

/**
 * Calls `then` once every request received in full on the connection has had its answer written (in
 * order, by Node), at once when there is none; never if the connection closes first. For an answer
 * Node has to give after them (a parse error, clientErrorHandler): a request still arriving is not
 * waited for, it is the one the error is about. Knows the queued requests of servers whose listener is
 * wrapped with inOrder; on others, only the connection's current answer.
 */
export function afterReceivedAnswered(socket: Duplex, then: () => void): void {
  const current = (socket as HttpSocket)._httpMessage;
  const answers = [...(current ? [current] : []), ...(queued.get(socket) ?? [])];
  const last = answers.filter((res) => res.req?.complete && !res.writableFinished).at(-1);
  if (!last) {
    then();
    return;
  }
  const go = () => {
    socket.removeListener('close', stop);
    then();
  };
  const stop = () => last.removeListener('finish', go);
  last.once('finish', go);
  socket.once('close', stop);
}
