// The options of ii run, as commander hands them to the body.
export interface RunOptions {
  jobs?: number;
  agent?: string;
  watch?: boolean;
  maxJobs?: number;
  land?: boolean;
  rev?: string;
  nice?: number;
}
