/**
 * The sweeps API's shapes as the pages read them: the generated schema's, with what it
 * declares as free JSON (a sweep's space and pruner, a trial's parameters) given the shape
 * the server stores (studio/sweeps/space.py), and fields with a server default present
 * (`readSweep` in api.ts fills them).
 */
import type { Schemas } from "../../../api/client";

export type SweepStatus = Schemas["SweepStatusEnum"];
export type TrialState = Schemas["TrialStateEnum"];
export type Method = Schemas["MethodEnum"];
export type Direction = Schemas["DirectionEnum"];
export type PrunerKind = Schemas["PrunerKindEnum"];
export type RunLink = Schemas["RunLink"];
export type ConfigChange = Schemas["ConfigChange"];
export type Importance = Schemas["Importance"];
export type Best = Schemas["Best"];
export type SweepCreate = Schemas["SweepCreateRequest"];

/** The run input fields a sweep may search over (ids of the project's items). */
export type InputField = "model" | "dataset_version" | "validation_version" | "reward_version" | "critic_model" | "lora_adapter";

export type FloatParam = { name: string; type: "float"; low: number; high: number; log: boolean };
export type IntParam = { name: string; type: "int"; low: number; high: number; step: number };
export type ChoiceParam = { name: string; type: "choice"; values: (string | number | boolean)[] };
export type InputParam = { name: InputField; type: "input"; values: number[] };
/** One parameter of the space; each is a `ParameterRequest` of the create request (tsc checks below). */
export type Param = FloatParam | IntParam | ChoiceParam | InputParam;
export type Pruner = Schemas["PrunerRequest"];

export type ParamValue = string | number | boolean | null;

type GeneratedTrial = Schemas["Trial"];
export type Trial = Omit<GeneratedTrial, "params" | "state" | "value" | "intermediate" | "stopped_at_step" | "stop_reason" | "created_at" | "finished_at"> & {
  params: Record<string, ParamValue>;
  state: TrialState;
  value: number | null;
  intermediate: [number, number][];
  stopped_at_step: number | null;
  stop_reason: string;
  created_at: string;
  finished_at: string | null;
};

export type TrialCounts = Record<TrialState, number>;

type Defaulted = "status" | "metric" | "direction" | "parallelism" | "trial_counts" | "created_at";
export type SweepSummary = Omit<Schemas["Sweep"], Defaulted> & {
  status: SweepStatus;
  metric: string;
  direction: Direction;
  parallelism: number;
  trial_counts: TrialCounts;
  created_at: string;
};

type DetailOnly = "space" | "pruner" | "preset" | "seed" | "metric_reward" | "stop_on_critical_alert" | "status_reason" | "trials" | "best_trial";
export type SweepDetail = SweepSummary &
  Omit<Schemas["SweepDetail"], keyof Schemas["Sweep"] | DetailOnly> & {
    space: Param[];
    pruner: Pruner;
    preset: string;
    seed: number;
    metric_reward: string;
    stop_on_critical_alert: boolean;
    status_reason: string;
    trials: Trial[];
    best_trial: (Trial & { config_diff: ConfigChange[] }) | null;
  };

// Every parameter the form builds is a parameter the create request takes.
type Assignable<A extends B, B> = A;
export type ParamsFitRequest = Assignable<Param, Schemas["ParameterRequest"]>;
