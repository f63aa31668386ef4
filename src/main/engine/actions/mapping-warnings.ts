import type { Config, ConfigWarning } from '../../../shared/config.schema';
import { actionsHeaderTwins } from '../../../shared/actions/request';
import { triggerWarning } from './trigger';
import { segmentUrlProblem } from './url-field';

/**
 * What a config's mappings do otherwise than they look, kept with a warning: a URL Segment refuses
 * (nothing sent, as there), and the lab's own checks of what Segment takes (issue 37): a trigger it
 * reads otherwise, header names joined.
 */
export function actionsMappingWarnings(config: Config): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  config.sources.forEach((s, i) =>
    s.webhooks?.mappings?.forEach((m, j) => {
      const at = `sources[${i}].webhooks.mappings[${j}]`;
      const problem = typeof m.url !== 'string' ? null : segmentUrlProblem(m.url);
      if (problem) {
        warnings.push({ path: `${at}.url`, code: 'segment_refuses_url', message: `${problem} Segment sends nothing for this mapping, and neither does the lab: percent-encode characters outside ASCII and spaces` });
      }
      const trigger = m.trigger === undefined ? null : triggerWarning(m.trigger);
      if (trigger) warnings.push({ path: `${at}.trigger`, code: 'trigger_reads_otherwise', message: trigger });
      for (const message of actionsHeaderTwins(m.headers ?? {})) warnings.push({ path: `${at}.headers`, code: 'headers_joined', message });
    }),
  );
  return warnings;
}
