// The declaration in include/CFuzzDriver.h is all this target provides.
#include "CFuzzDriver.h"
