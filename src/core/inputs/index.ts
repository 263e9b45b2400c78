export { answerAudit, enqueueInputContinuation, InputService } from './input-service.js';
export { LiveQuestions, type LiveQuestionTiming } from './live-questions.js';
export { type SortedQuestions, sortQuestions } from './questions.js';
