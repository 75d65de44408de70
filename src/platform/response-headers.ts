/** Sets headers on a finished response; responses from fetch() have immutable headers, so copy when needed. */
export function withHeaders(res: Response, edit: (h: Headers) => void): Response {
  try {
    edit(res.headers);
    return res;
  } catch {
    const copy = new Response(res.body, res);
    edit(copy.headers);
    return copy;
  }
}
