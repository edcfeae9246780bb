/** The bearer token: from the URL fragment (`#token=…`, never sent to the server), else session storage, else a prompt. */
export const TOKEN_KEY = 'troupe.inspector.token';

export function readToken(): string {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match) {
    const token = decodeURIComponent(match[1]!);
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, '', location.pathname + location.search);
    return token;
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? askToken();
}

export function askToken(): string {
  const token = (window.prompt('troupe server token (printed when the server started):') ?? '').trim();
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  return token;
}
