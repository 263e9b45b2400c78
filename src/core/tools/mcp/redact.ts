/** Token shapes redacted wherever they appear, whoever's they are. */
const tokenPatterns: ReadonlyArray<[RegExp, string]> = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]'],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, '[redacted]'],
  [/\bxox[a-z]-[A-Za-z0-9-]{8,}/gi, '[redacted]'],
  [/\bxapp-[A-Za-z0-9-]{8,}/gi, '[redacted]'],
  [/\bgh[pousr]_[A-Za-z0-9]{16,}/g, '[redacted]'],
  // `access_token=…`, `"api_key": "…"`, `password: …`
  [
    /\b([\w-]*(?:token|secret|password|passwd|api[_-]?key|access[_-]?key))(["']?\s*[:=]\s*["']?)[^\s"'&,;]+/gi,
    '$1$2[redacted]',
  ],
];

/**
 * Environment and header values shorter than this are kept: `LOG_LEVEL: warn` is no secret, and redacting
 * every "warn" would make the server's log unreadable. Explicit secrets are redacted whatever their length.
 */
const minimumConfiguredValueLength = 8;

/** Parts of a header value: `Bearer abc` holds the secret `abc`. */
function valueParts(value: string): string[] {
  return [value, ...value.split(/\s+/)];
}

/**
 * A function that removes secrets from text that leaves Butler's control (a child's stderr, an error
 * message): the given values and everything that looks like a token.
 */
export function createRedactor(input: {
  configuredValues: readonly string[];
  secrets: readonly string[];
}): (text: string) => string {
  const literals = [
    ...input.configuredValues
      .flatMap(valueParts)
      .filter((value) => value.length >= minimumConfiguredValueLength),
    ...input.secrets.filter((secret) => secret.length > 0),
  ];
  // Longest first, so a secret that contains another is removed whole.
  const unique = [...new Set(literals)].sort((left, right) => right.length - left.length);
  return (text) => {
    let result = text;
    for (const literal of unique) result = result.split(literal).join('[redacted]');
    for (const [pattern, replacement] of tokenPatterns) result = result.replace(pattern, replacement);
    return result;
  };
}
