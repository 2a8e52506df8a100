/** Plans for broker and caps tests. */
import type { Plan } from "../../../src/core/approvals/types.js";
import type { Speaker } from "../../../src/core/keys.js";

export const alice: Speaker = { userKey: "console:local:alice", displayName: "Alice" };
export const bob: Speaker = { userKey: "console:local:bob", displayName: "Bob" };
export const conversation = "console:local:term:main";

export function transferPlan(amount = "5", asset = "USDC", requester = alice.userKey): Plan {
  return {
    id: `plan_test_${Math.random().toString(36).slice(2)}`,
    intent: `send ${amount} ${asset} to 0xabc`,
    summary: `wallet__transfer ${amount} ${asset} to 0xabc`,
    actions: [
      {
        tool: "wallet__transfer",
        arguments: { to: "0xabc", amount, asset },
        spend: { amount, asset, recipient: "0xabc" },
      },
    ],
    requester,
    createdAt: Date.now(),
  };
}
