/**
 * The memory port when no cortex is wired: every page is empty and write-back does nothing.
 */
import { EMPTY_PAGE, type MemoryPort } from "../memory-port.js";

export const NO_MEMORY: MemoryPort = {
  fault: async () => EMPTY_PAGE,
  writeBack: () => {},
};
