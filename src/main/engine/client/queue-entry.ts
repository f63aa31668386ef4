import type { ByteArena } from './byte-arena';
import type { QueuedMessage } from './persistence';
import { UUID_LENGTH } from './uuid-pool';

/** Ids the caller chose (or persistence restored), kept as strings: they are not at a known place in the bytes. */
interface OwnIds {
  id: string;
  messageId: string;
}

/**
 * One message as the in-memory queue holds it: stamped, serialized once at enqueue and kept as UTF-8
 * bytes in a ByteArena chunk, so later changes to the caller's object cannot change what is sent.
 * A generated messageId is read back from those bytes when asked for, so a deep queue holds no
 * string per message. Persistence sees the plain QueuedMessage record (toRecord), never the chunk.
 */
export class QueueEntry {
  constructor(
    readonly type: string,
    /** The message exactly as it goes into `batch`: `chunk[offset, offset + bytes)`. */
    readonly chunk: Buffer,
    readonly offset: number,
    readonly bytes: number,
    /** Epoch ms (client clock) of the enqueue. */
    readonly enqueuedAt: number,
    /** Where the generated messageId's ASCII bytes start in `chunk`; unused when `own` is set. */
    private readonly idAt: number,
    private readonly own: OwnIds | null,
  ) {}

  /** A record restored from persistence, copied into the arena. */
  static restore(record: QueuedMessage, arena: ByteArena): QueueEntry {
    const { chunk, offset, bytes } = arena.append(record.json);
    return new QueueEntry(record.type, chunk, offset, bytes, record.enqueuedAt, -1, { id: record.id, messageId: record.messageId });
  }

  /** Queue entry id, unique across restarts; equals messageId unless the caller set its own messageId. */
  get id(): string {
    return this.own ? this.own.id : this.generatedId();
  }

  get messageId(): string {
    return this.own ? this.own.messageId : this.generatedId();
  }

  /** The message's JSON text, decoded on demand (persistence and tests; batches copy the bytes). */
  get json(): string {
    return this.chunk.toString('utf8', this.offset, this.offset + this.bytes);
  }

  toRecord(): QueuedMessage {
    return { id: this.id, messageId: this.messageId, type: this.type, json: this.json, bytes: this.bytes, enqueuedAt: this.enqueuedAt };
  }

  private generatedId(): string {
    return this.chunk.toString('latin1', this.idAt, this.idAt + UUID_LENGTH);
  }
}
