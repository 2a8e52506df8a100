/** Who may use Neo, and who is an admin. */
export { createAdminCheck, type IsAdmin } from "./admin.js";
export { type AccessEntry, AccessError, type AccessPolicy, createAccessPolicy } from "./policy.js";
