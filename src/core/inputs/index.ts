export { answerAudit, enqueueInputContinuation, InputService } from './input-service.js';
export { type SortedQuestions, sortQuestions } from './questions.js';
