import { HttpError } from './http.js';

/** A name from a URL path segment. @throws HttpError 400 `invalid_name` for bad URL encoding. */
export function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new HttpError(400, 'invalid_name', 'Name is not valid URL encoding.');
  }
}

/** The methods each fixed API path takes, for 405 answers with an `Allow` header. */
export const ALLOWED = new Map<string, string>([
  ['/api/chat', 'POST'],
  ['/api/chat/approve', 'POST'],
  ['/api/chat/cancel', 'POST'],
  ['/api/chat/steer', 'POST'],
  ['/api/chat/answer', 'POST'],
  ['/api/runs', 'GET'],
  ['/api/agents', 'GET'],
  ['/api/inspect', 'GET'],
  ['/api/coverage', 'GET'],
]);
