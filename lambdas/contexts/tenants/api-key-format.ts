/**
 * What an API key and the header carrying it look like, in one place and with no imports: the
 * authorizer reads the key out of the header with it, and API Gateway (the CDK authorizer's
 * `validationRegex`) and the local runtime refuse every other header with 401 before the
 * authorizer is invoked, so a malformed token costs no invocation and no cached decision.
 */

/** Visible marker of our keys, so a leaked key is recognisable by secret scanners. */
export const API_KEY_MARKER = 'cct_';

/** A key: the marker and 32 random bytes in base64url without padding (43 characters). */
const API_KEY = `${API_KEY_MARKER}[A-Za-z0-9_-]{43}`;

/**
 * `Authorization: Bearer <key>`, exactly what the authorizer accepts: the scheme in any case (RFC
 * 9110 section 11.1), one or more spaces, one key, trailing spaces. Written without flags,
 * lookarounds or shorthand classes, so API Gateway (Java's regular expressions, which the
 * `identityValidationExpression` is) and JavaScript read it alike; the group is the key.
 */
export const AUTHORIZATION_HEADER_REGEX = `^[Bb][Ee][Aa][Rr][Ee][Rr] +(${API_KEY}) *$`;

const AUTHORIZATION_HEADER = new RegExp(AUTHORIZATION_HEADER_REGEX);

/** The key of an `Authorization` header of the form above; undefined for any other header or none. */
export const apiKeyOfAuthorizationHeader = (header: string | undefined): string | undefined =>
  AUTHORIZATION_HEADER.exec(header ?? '')?.[1];
