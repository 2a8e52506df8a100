/**
 * What the user is told when the model could not be used for their turn: said plainly, with what
 * (if anything) they can do about it. Operators get the details in the log line.
 */
import type { LlmError } from "../llm/errors.js";

export function modelTroubleText(e: LlmError): string {
  switch (e.code) {
    case "LLM_CONTEXT_LENGTH":
      return "This conversation has grown past what the language model can take, even after I consolidated it. Say `/neo reset` to start it over.";
    case "LLM_AUTH":
      return "I can't use the language model right now: it refused my credentials. An admin needs to check the API key.";
    case "LLM_BAD_REQUEST":
      return `The language model refused my request (${e.status ?? "no status"}). An admin can find why in my logs.`;
    case "LLM_STREAM_BROKEN":
      return "The language model's answer kept breaking off before it was complete. Please try again in a moment.";
    case "LLM_RATE_LIMITED":
      return "The language model is rate-limiting me right now. Please try again in a minute.";
    default:
      return `Sorry, I couldn't reach the language model (${e.code}). Please try again in a moment.`;
  }
}
