/** Why a model call failed. The pipeline sends the batch's events to dead letters with this. */
export enum ModelExceptionCode {
  /** The model answered, but not with output that validates against the schema. */
  MALFORMED_OUTPUT = 'MALFORMED_OUTPUT',
  /** HTTP error, connection refused, rate limit after all retries. */
  UNAVAILABLE = 'UNAVAILABLE',
  TIMEOUT = 'TIMEOUT',
  /** The output violates the ontology and no mapping rule applies. */
  ONTOLOGY_VIOLATION = 'ONTOLOGY_VIOLATION',
}

export class ModelException extends Error {
  constructor(
    readonly code: ModelExceptionCode,
    message: string,
    /** What the model returned (truncated), kept in the dead letter for diagnosis. */
    readonly rawOutput?: string,
    readonly attempts?: number,
  ) {
    super(message);
    this.name = 'ModelException';
  }
}
