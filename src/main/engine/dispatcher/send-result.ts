import type { AttemptTiming } from '../../../shared/types';

/** What one HTTP attempt came to: apart from http-sender.ts, so that what sends it (send-attempt.ts, send-errors.ts) can name it. */
export interface SendResult {
  /** Epoch ms from the injected clock when the attempt began: when send() was called (a sender's first sends: once undici was loaded). */
  startedAt: number;
  /** Real elapsed time, whatever the injected clock says. */
  durationMs: number;
  status: number | null;
  /** Names lowercased; repeated headers joined with ", ". */
  responseHeaders: Record<string, string> | null;
  /** UTF-8, at most RESPONSE_BODY_LIMIT (send-attempt.ts) bytes of it. */
  responseBody: string | null;
  responseTruncated: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  timedOut: boolean;
  tlsError: boolean;
  /** Connect, TLS, first byte and total, where measured; null when the request never had a connection. */
  timing: AttemptTiming | null;
}
