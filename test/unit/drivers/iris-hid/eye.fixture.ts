// The tests' eye: the simulators' stand-in (a textured iris disc r=100 at (320 + impression % 5, 240),
// pupil r=35 at 10, sclera at 200), whose geometry the tests assert.
export { fallbackEyeImage as testEye } from '../../../../drivers/simulator/images.js';
