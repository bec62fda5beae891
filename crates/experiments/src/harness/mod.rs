//! What every technique shares, and none is named in: the backends and the device dispatch,
//! the drivers, memory probes, timing and paired timing, the training step, single-operation
//! measurement, the models, and moving a model between backends.

pub mod backend;
pub mod calibration;
pub mod driver;
pub mod models;
pub mod optim;
pub mod paired;
pub mod probe;
pub mod profile;
pub mod single_op;
pub mod summary;
pub mod timing;
pub mod train;
pub mod transfer;
pub mod turns;
