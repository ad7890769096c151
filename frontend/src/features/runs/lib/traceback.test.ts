import { describe, expect, it } from "vitest";

import { lastUserLine, userLineOf } from "./traceback";

const SANDBOX = `Traceback (most recent call last):
  File "/app/trainer/rewards/sandbox/call.py", line 222, in _run_user_code
    exec(code, namespace)
  File "reward.py", line 3, in <module>
  File "reward.py", line 7, in helper
ZeroDivisionError: division by zero`;

const TRAINER = `Traceback (most recent call last):
  File "/app/trainer/loop.py", line 80, in train
    scorer = build_scorer(cfg.reward)
  File "/app/trainer/rewards/sandbox/pool.py", line 120, in __init__
    raise RewardCodeError(message)
trainer.rewards.errors.RewardCodeError: the reward code raised while loading: ZeroDivisionError: division by zero (line 4)`;

describe("traceback", () => {
  it("finds the user's frames, not the trainer's", () => {
    expect(userLineOf('  File "reward.py", line 3, in <module>')).toBe(3);
    expect(userLineOf('  File "/app/trainer/loop.py", line 80, in train')).toBeNull();
    expect(userLineOf('  File "/srv/x/my_reward.py", line 9, in f')).toBeNull();
  });

  it("ends at the innermost user frame", () => {
    expect(lastUserLine(SANDBOX)).toBe(7);
  });

  it("reads the line from the trainer's summary of a reward error", () => {
    expect(lastUserLine(TRAINER)).toBe(4);
    expect(lastUserLine("RuntimeError: loss is nan")).toBeNull();
  });
});
