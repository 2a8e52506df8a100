/**
 * The Web API client's fetch, held to a time limit that ends with the call. The client's own
 * `timeout` option arms `AbortSignal.timeout` for every call, and that timer cannot be cleared: ten
 * seconds after each call had long finished, it aborted the call's signal, and fetch's listener ran
 * its abort path over the finished response (a DOMException, an abort event, the fetch torn down):
 * ~2 % of Neo's CPU in a steady-state profile, about 0.3 ms per answered message (a post each).
 * Here the limit is a timer cleared once the answer's body is read.
 */

const timeoutError = () => new DOMException("The operation was aborted due to timeout", "TimeoutError");

/**
 * The reads the Web API client makes of an answer's body (`text`, `arrayBuffer`: WebClient's
 * buildResult) end the call's limit once they settle. The response is handed on as it is, not
 * read into memory and wrapped again (a second body stream per call). An answer whose body is never
 * read (a 429, refused before) keeps the limit until it runs out, as every call did before.
 */
function endingWithBody(res: Response, end: () => void): Response {
  const text = res.text.bind(res);
  const arrayBuffer = res.arrayBuffer.bind(res);
  return Object.assign(res, {
    text: () => text().finally(end),
    arrayBuffer: () => arrayBuffer().finally(end),
  });
}

/** `fetch`, each call aborted with a `TimeoutError` unless it is answered and its body read within `ms`. */
export function fetchWithin(ms: number, inner: typeof fetch = (i, o) => fetch(i, o)): typeof fetch {
  return async (input, init) => {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(timeoutError()), ms);
    // Like AbortSignal.timeout's: a limit left running (a body never read) never holds the process up.
    timer.unref?.();
    const end = () => clearTimeout(timer);
    const signal = init?.signal ? AbortSignal.any([init.signal, ctl.signal]) : ctl.signal;
    try {
      return endingWithBody(await inner(input, { ...init, signal }), end);
    } catch (err) {
      end();
      throw err;
    }
  };
}
