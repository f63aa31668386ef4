import type { Db } from './database';
import type { Persistence, QueuedMessage } from '../client/persistence';

/** SQLite persistence for the app's batching client: a message stays until its batch is accepted or dropped. */
export class ClientQueueRepo implements Persistence {
  private readonly insertStmt;
  private readonly deleteStmt;

  constructor(private readonly db: Db) {
    this.insertStmt = db.prepare('INSERT OR IGNORE INTO client_queue (id, message) VALUES (?, ?)');
    this.deleteStmt = db.prepare('DELETE FROM client_queue WHERE id = ?');
  }

  load(): QueuedMessage[] {
    return (this.db.prepare('SELECT message FROM client_queue ORDER BY seq').all() as { message: string }[]).map(
      (r) => JSON.parse(r.message) as QueuedMessage,
    );
  }

  count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM client_queue').get() as { n: number }).n;
  }

  add(messages: QueuedMessage[]): void {
    this.db.transaction(() => {
      for (const m of messages) this.insertStmt.run(m.id, JSON.stringify(m));
    })();
  }

  remove(ids: string[]): void {
    this.db.transaction(() => {
      for (const id of ids) this.deleteStmt.run(id);
    })();
  }
}
