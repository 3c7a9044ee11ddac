// The Qt headers the monitor's tests share, parsed once for all of them
// (monitor/tests/CMakeLists.txt) instead of once per test file.
#pragma once

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <QtWidgets>
