/** The metrics the pipeline promises (docs/OBSERVABILITY.md), default process metrics aside. */
export const PIPELINE_METRIC_NAMES = [
  'partner_enrich_records_in_total',
  'partner_enrich_records_out_total',
  'partner_enrich_dead_letters_total',
  'partner_enrich_bulk_latency_seconds',
  'partner_enrich_bulk_submissions_total',
  'partner_enrich_tasks_in_flight',
  'partner_enrich_records_in_flight',
  'partner_enrich_quota_consumed_total',
  'partner_enrich_quota_over_limit_total',
  'partner_enrich_intake_paused',
  'partner_enrich_intake_pauses_total',
  'partner_enrich_consumer_lag',
  'partner_enrich_http_requests_total',
  'partner_enrich_retries_total',
];
