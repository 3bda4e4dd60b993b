// The Android SDK as Gradle modules, for app developers. This repository's CI does not run Gradle (no Android SDK or
// Maven repository is reachable there): scripts/android.sh compiles the same sources with the Kotlin compiler and
// type-checks them against the Android API 36 signatures instead.
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}
dependencyResolutionManagement {
    repositories {
        google()
        mavenCentral()
    }
}
rootProject.name = "touchstone-android"
include(":touchstone-kit", ":sample")
