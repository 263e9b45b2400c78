export { FeedbackRecorder, maxFeedbackCommentChars } from './feedback-recorder.js';
