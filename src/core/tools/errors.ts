/** Errors of the tool surface that are not transport failures (those are `ToolTransportError`). */

/** The agent manifest is malformed. The message names the file, the server alias and the field. */
export class ManifestError extends Error {
  readonly code = "MANIFEST";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ManifestError";
  }
}

/** A `${VAR}` in a server's command, args, env, cwd, url or headers has no value in the environment. */
export class MissingEnvVarError extends Error {
  readonly code = "MANIFEST_ENV";
  constructor(
    readonly server: string,
    readonly variable: string,
    readonly field: string,
  ) {
    super(`server "${server}": ${field} needs environment variable ${variable}, which is not set`);
    this.name = "MissingEnvVarError";
  }
}
