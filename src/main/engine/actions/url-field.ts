import { fieldsToJsonSchema } from '@segment/actions-core/destination-kit/fields-to-jsonschema';
import { validateSchema } from '@segment/actions-core/schema-validation';
import { NotSentError } from './mapping-kit';

// A mapping's URL as Segment's Webhooks (Actions) destination judges it: its `send` action declares
// the field below (@segment/action-destinations, destinations/webhook/send/index.ts, at the release
// the README names), and actions-core validates every payload against it before anything is sent. A
// URL that is no valid URI (non-ASCII characters, a space) fails there: Segment sends nothing, so the
// lab sends nothing either (issue 37), with Segment's own message.

/** The send action's `url` field, as declared upstream. */
const URL_FIELD = { url: { label: 'URL', description: 'URL to deliver data to.', type: 'string', required: true, format: 'uri' } } as const;
const SCHEMA = fieldsToJsonSchema(URL_FIELD as never);

const judged = new Map<string, string | null>();
const MAX_JUDGED = 500;

/** Segment's refusal of the URL (its validation message), or null when it takes it. A directive's may resolve to anything. */
export function segmentUrlProblem(url: unknown): string | null {
  if (typeof url !== 'string') return validationProblem(url);
  const hit = judged.get(url);
  if (hit !== undefined) return hit;
  const problem = validationProblem(url);
  if (judged.size >= MAX_JUDGED) judged.clear();
  judged.set(url, problem);
  return problem;
}

function validationProblem(url: unknown): string | null {
  try {
    validateSchema(url === undefined ? {} : { url }, SCHEMA, { schemaKey: 'webhook-lab:actions-send-url' });
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Why a mapping whose URL Segment's payload validation refuses sends nothing. */
export function urlNotAUriMessage(problem: string): string {
  return `Segment's payload validation refuses the mapping's URL: ${problem} Percent-encode characters outside ASCII and spaces (é as %C3%A9); Segment sends nothing for such a mapping`;
}

/** The mapping's URL fails Segment's payload validation: the request is not sent. */
export class UrlNotAUri extends NotSentError {
  constructor(problem: string) {
    super(urlNotAUriMessage(problem));
    this.name = 'UrlNotAUri';
  }
}

/** Throws UrlNotAUri where Segment would refuse the URL. */
export function refuseUrlSegmentRefuses(url: string): void {
  const problem = segmentUrlProblem(url);
  if (problem !== null) throw new UrlNotAUri(problem);
}
