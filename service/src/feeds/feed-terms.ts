// The feed vocabulary shared by the service and the renderer (which imports this file directly):
// no imports here, so a new schedule or status reaches the Feeds page without a second list.
export const SCHEDULES = ['hourly', 'daily', 'weekly', 'monthly', 'never'] as const;
export type Schedule = (typeof SCHEDULES)[number];
export const STATUSES = ['unsupported', 'deprecated', 'experimental', 'test', 'stable'] as const;
export type Status = (typeof STATUSES)[number];
