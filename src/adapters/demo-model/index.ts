export { demoNotice } from './demo-script.js';
export { type DemoModel, startDemoModel } from './demo-server.js';
export { createDemoTools } from './demo-tools.js';
