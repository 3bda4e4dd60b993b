plugins {
    id("com.android.library")
    id("org.jetbrains.kotlin.android")
}

android {
    namespace = "dev.touchstone.kit"
    compileSdk = 36
    defaultConfig {
        minSdk = 30
    }
    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
    sourceSets["main"].java.srcDirs("src/main/kotlin")
    sourceSets["test"].java.srcDirs("src/test/kotlin")
    testOptions {
        // The JVM tests run against a real `touchstone serve`; scripts/android.sh passes these properties.
        unitTests.all {
            it.systemProperty("touchstone.binary", System.getProperty("touchstone.binary") ?: "")
            it.systemProperty("touchstone.repo", rootProject.projectDir.parentFile.path)
        }
    }
}

kotlin {
    jvmToolchain(17)
}

dependencies {
    // Nothing beyond the Kotlin standard library and Android itself (org.json, HttpURLConnection, java.security).
    testImplementation("junit:junit:4.13.2")
    // org.json for the JVM tests: android.jar's throws "Stub!" there (scripts/android.sh uses AOSP's own, libandroid-json-java).
    testImplementation("org.json:json:20240303")
}
