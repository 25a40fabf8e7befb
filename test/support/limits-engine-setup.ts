import { runOnLimitsEngine } from './on-limits-engine';

// The setup file of the `integration-limits` project (jest.config.js): its files run on the limits engine.
runOnLimitsEngine();
