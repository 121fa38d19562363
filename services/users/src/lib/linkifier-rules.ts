/**
 * Linkifier validation for the users service, which owns linkifiers. The rules themselves
 * (RE2 compilation, RFC 6570 templates, matching group names) live with the renderer that
 * runs the patterns (@zc/markdown), so a pattern accepted here is one the renderer can run.
 */
import { urlFormatStringToTemplate, validateLinkifier } from '@zc/markdown';
import { AppError } from '@zc/shared/errors';

/** `%(name)s` (the legacy url_format_string) to the equivalent RFC 6570 template. */
export const legacyFormatToTemplate = urlFormatStringToTemplate;

/** The legacy `%(name)s` form of a simple template, for clients of the old `realm_filters` shape. */
export function templateToLegacyFormat(template: string): string {
  return template.replace(/%/g, '%%').replace(/\{[+#]?(\w+)\}/g, '%($1)s');
}

/** Zulip's RealmFilter.pattern max_length. */
export const LINKIFIER_PATTERN_MAX_LENGTH = 1000;
/** Zulip's RealmFilter.url_template max_length. */
export const LINKIFIER_TEMPLATE_MAX_LENGTH = 1024;

/**
 * Throws Zulip's validation error (ValidationFailureError shape: the first message as `msg`,
 * and `errors` by field) for a bad pattern or template.
 */
export function checkLinkifier(pattern: string, urlTemplate: string): void {
  // Zulip's model limits (RealmFilter.pattern and url_template), checked before the pattern is
  // compiled: a huge pattern costs the regex engine memory before it can be refused.
  for (const [field, value, max] of [['pattern', pattern, LINKIFIER_PATTERN_MAX_LENGTH], ['url_template', urlTemplate, LINKIFIER_TEMPLATE_MAX_LENGTH]] as const) {
    if (value.length > max) {
      const problem = `Ensure this value has at most ${max} characters (it has ${value.length}).`;
      throw new AppError('BAD_REQUEST', problem, 400, { errors: { [field]: [problem] } });
    }
  }
  const problem = pattern.trim() === '' ? 'Bad regular expression: empty pattern' : validateLinkifier(pattern, urlTemplate);
  if (problem === undefined) return;
  const field = /^Bad regular expression|in linkifier pattern is not present/.test(problem) ? 'pattern' : 'url_template';
  throw new AppError('BAD_REQUEST', problem, 400, { errors: { [field]: [problem] } });
}
